// The cases of tests/clients/fix_matrix.py through pgjdbc, in one JVM for every mode and case.
// Usage: java -cp postgresql.jar MatrixCases.java <jdbc-url-without-parameters>
// Reads lines "mode<TAB>application_name<TAB>sql" on stdin; consecutive lines with the same
// application_name run on one connection, in autocommit, each through a PreparedStatement.
// Modes: simple (preferQueryMode=simple), extended (prepareThreshold=0: the unnamed
// statement), prepared (prepareThreshold=1: a named server statement from the first run).
// Prints "application_name<TAB>kind<TAB>field…" lines, with \t, \n and \\ escaped and \N for
// null: "row value" (the first column), "notice message hint", "error sqlstate message hint".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLWarning;
import org.postgresql.util.ServerErrorMessage;

public class MatrixCases {
    static final StringBuilder OUT = new StringBuilder();

    static String esc(String s) {
        if (s == null) return "\\N";
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n");
    }

    static void out(String app, String kind, String... fields) {
        OUT.append(esc(app)).append('\t').append(kind);
        for (String f : fields) OUT.append('\t').append(esc(f));
        OUT.append('\n');
    }

    static void warnings(String app, SQLWarning w) {
        for (; w != null; w = w.getNextWarning()) {
            ServerErrorMessage m = w instanceof PSQLWarning ? ((PSQLWarning) w).getServerErrorMessage() : null;
            if (m == null) out(app, "notice", w.getMessage(), null);
            else out(app, "notice", m.getMessage(), m.getHint());
        }
    }

    static void run(String url, String mode, String app, List<String> statements) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "agent");
        p.setProperty("sslmode", "disable");
        p.setProperty("ApplicationName", app);
        p.setProperty("assumeMinServerVersion", "10");  // application_name in the start-up packet
        switch (mode) {
            case "simple": p.setProperty("preferQueryMode", "simple"); break;
            case "extended": p.setProperty("prepareThreshold", "0"); break;
            case "prepared": p.setProperty("prepareThreshold", "1"); break;
            default: throw new IllegalArgumentException("unknown mode " + mode);
        }
        try (Connection c = DriverManager.getConnection(url, p)) {
            for (String sql : statements) {
                try (PreparedStatement ps = c.prepareStatement(sql)) {
                    try {
                        if (ps.execute()) {
                            try (ResultSet rs = ps.getResultSet()) {
                                while (rs.next()) out(app, "row", rs.getString(1));
                            }
                        }
                    } catch (PSQLException e) {
                        ServerErrorMessage m = e.getServerErrorMessage();
                        if (m == null) out(app, "error", e.getSQLState(), e.getMessage(), null);
                        else out(app, "error", m.getSQLState(), m.getMessage(), m.getHint());
                    }
                    warnings(app, ps.getWarnings());
                }
                warnings(app, c.getWarnings());
                c.clearWarnings();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String mode = null, app = null;
        List<String> statements = new ArrayList<>();
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t", 3);
            if (app != null && !app.equals(f[1])) {
                run(args[0], mode, app, statements);
                statements = new ArrayList<>();
            }
            mode = f[0];
            app = f[1];
            statements.add(f[2]);
        }
        if (app != null) run(args[0], mode, app, statements);
        System.out.print(OUT);
    }
}

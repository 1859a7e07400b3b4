import java.sql.*;
import java.util.*;

/**
 * The client matrix through pgjdbc. Run as a single-file program:
 *   java -cp /usr/share/java/postgresql.jar ClientMatrix.java jdbc:postgresql://host:port/scratchpad?...
 * Every line printed is "key: value"; the Python test asserts on them.
 */
public class ClientMatrix {
    static void out(String key, Object value) {
        System.out.println(key + ": " + value);
    }

    static String rows(ResultSet rs) throws SQLException {
        StringBuilder sb = new StringBuilder();
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
            if (sb.length() > 0) sb.append(" | ");
            for (int i = 1; i <= n; i++) {
                if (i > 1) sb.append(",");
                sb.append(rs.getString(i));
            }
        }
        rs.close();
        return sb.toString();
    }

    static String warnings(SQLWarning w) {
        List<String> all = new ArrayList<>();
        for (; w != null; w = w.getNextWarning()) all.add(w.getMessage());
        return all.isEmpty() ? "none" : String.join(" / ", all);
    }

    interface Step { void run() throws Exception; }

    static void step(String name, Step s) {
        try {
            s.run();
        } catch (SQLException e) {
            out("failed." + name, e.getSQLState() + " " + e.getMessage().split("\n")[0]);
        } catch (Exception e) {
            out("failed." + name, e.toString());
        }
    }

    public static void main(String[] args) throws Exception {
        Connection c = DriverManager.getConnection(args[0]);
        step("setup", () -> {
            DatabaseMetaData md = c.getMetaData();
            out("product", md.getDatabaseProductName() + " " + md.getDatabaseMajorVersion());
        });
        step("discovery", () -> {
            DatabaseMetaData md = c.getMetaData();
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = md.getTables(null, "glove", "%", new String[] {"TABLE"})) {
                while (rs.next()) {
                    tables.add(rs.getString("TABLE_NAME"));
                    out("table." + rs.getString("TABLE_NAME"), rs.getString("REMARKS"));
                }
            }
            out("tables", String.join(",", tables));
            try (ResultSet rs = md.getColumns(null, "glove", "tasks", "%")) {
                while (rs.next()) out("column.tasks." + rs.getString("COLUMN_NAME"), rs.getString("TYPE_NAME")
                        + " " + rs.getString("IS_NULLABLE") + " " + rs.getString("REMARKS"));
            }
            List<String> pk = new ArrayList<>();
            try (ResultSet rs = md.getPrimaryKeys(null, "glove", "items")) {
                while (rs.next()) pk.add(rs.getString("COLUMN_NAME"));
            }
            out("pk.items", String.join(",", pk));
        });
        step("read", () -> {
            try (Statement s = c.createStatement()) {
                out("read", rows(s.executeQuery(
                    "SELECT rank, url FROM web WHERE query = 'postgresql' ORDER BY rank LIMIT 2")));
            }
        });
        step("param", () -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT name, price FROM items WHERE id = ?")) {
                List<String> got = new ArrayList<>();
                for (int id : new int[] {1, 2, 3, 4, 5}) {  // past prepareThreshold: server-prepared
                    ps.setInt(1, id);
                    got.add(rows(ps.executeQuery()));
                }
                out("param", String.join(";", got));
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT title FROM web WHERE query = ? ORDER BY rank LIMIT 1")) {
                ps.setString(1, "postgresql");
                out("param.web", rows(ps.executeQuery()));
            }
        });
        step("join", () -> {
            try (Statement s = c.createStatement()) {
                out("join", rows(s.executeQuery(
                    "SELECT items.id, items.name, tasks.title FROM items JOIN tasks ON tasks.id = items.id ORDER BY items.id")));
            }
        });
        step("types", () -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT id, due, status FROM tasks WHERE id = ?")) {
                ps.setLong(1, 1L);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    out("types", rs.getLong(1) + " " + rs.getDate(2).getClass().getSimpleName() + " " + rs.getString(3));
                }
            }
        });
        step("fetch", () -> {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.setFetchSize(10);
                int n = 0;
                long sum = 0;
                try (ResultSet rs = s.executeQuery("SELECT * FROM items ORDER BY id")) {
                    while (rs.next()) { n++; sum += rs.getLong("id"); }
                }
                out("fetch", n + " rows, id sum " + sum);
            }
            c.commit();
            c.setAutoCommit(true);
        });
        step("write", () -> {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO emails (to_addr, subject) VALUES (?, ?)")) {
                ps.setString(1, "jdbc@example.org");
                ps.setString(2, "from jdbc");
                out("write.count", ps.executeUpdate());
                SQLWarning w = ps.getWarnings();
                out("write.warning", w == null ? "none" : w.getMessage());
            }
            try (Statement s = c.createStatement()) {
                out("write.staged", rows(s.executeQuery("SELECT resource, verb, status FROM scratchpad.staged")));
            }
            c.clearWarnings();
            c.commit();
            out("write.commit.warning", warnings(c.getWarnings()));
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                out("write.after", "[" + rows(s.executeQuery("SELECT resource FROM scratchpad.staged")) + "]");
            }
        });
        step("error", () -> {
            try (Statement s = c.createStatement()) {
                s.executeQuery("SELECT * FROM web");
                out("error", "none");
            } catch (SQLException e) {
                out("error", e.getSQLState() + " " + e.getMessage().split("\n")[0]);
            }
            try (Statement s = c.createStatement()) {
                out("after.error", rows(s.executeQuery("SELECT count(*) FROM items")));
            }
        });
        step("error.tx", () -> {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                try {
                    s.executeQuery("SELECT nope FROM items");
                } catch (SQLException e) {
                    out("error.tx", e.getSQLState());
                }
                try {
                    s.executeQuery("SELECT 1");
                } catch (SQLException e) {
                    out("error.tx.aborted", e.getSQLState());
                }
            }
            c.rollback();
            c.setAutoCommit(true);
            try (PreparedStatement ps = c.prepareStatement("SELECT name FROM items WHERE id = ?")) {
                ps.setInt(1, 99);
                out("after.rollback", rows(ps.executeQuery()));
            }
        });
        step("batch", () -> {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO emails (to_addr, subject) VALUES (?, ?)")) {
                for (int i = 1; i <= 3; i++) {
                    ps.setString(1, "batch" + i + "@example.org");
                    ps.setString(2, "batch " + i);
                    ps.addBatch();
                }
                out("batch", Arrays.toString(ps.executeBatch()));
            }
            try (Statement s = c.createStatement()) {
                out("batch.staged", rows(s.executeQuery("SELECT id, calls FROM scratchpad.staged ORDER BY id")));
            }
            c.rollback();
            c.setAutoCommit(true);
        });
        step("keys", () -> {
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO emails (to_addr, subject) VALUES (?, ?)", new String[] {"to_addr", "subject"})) {
                ps.setString(1, "keys@example.org");
                ps.setString(2, "generated keys");
                out("keys.count", ps.executeUpdate());
                out("keys", rows(ps.getGeneratedKeys()));
            }
        });
        step("commit.after.error", () -> {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.executeUpdate("INSERT INTO emails (to_addr, subject) VALUES ('x@example.org', 'never sent')");
                try {
                    s.executeQuery("SELEC 1");
                } catch (SQLException e) {
                    out("commit.after.error.first", e.getSQLState());
                }
            }
            try {
                c.clearWarnings();
                c.commit();
                out("commit.after.error", "no exception, warnings: " + warnings(c.getWarnings()));
            } catch (SQLException e) {
                out("commit.after.error", e.getSQLState() + " " + e.getMessage().split("\n")[0]);
            }
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                out("commit.after.error.staged", rows(s.executeQuery("SELECT count(*) FROM scratchpad.staged")));
            }
        });
        step("readonly", () -> {
            c.setReadOnly(true);  // with autocommit off, pgjdbc sends BEGIN READ ONLY
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                out("readonly.read", rows(s.executeQuery("SELECT name FROM items WHERE id = 1")));
                try {
                    s.executeUpdate("INSERT INTO emails (to_addr, subject) VALUES ('ro@example.org', 'read only')");
                    out("readonly.write", "accepted");
                } catch (SQLException e) {
                    out("readonly.write", e.getSQLState());
                }
            }
            c.rollback();
            c.setAutoCommit(true);
            c.setReadOnly(false);
        });
        c.close();
        out("done", "ok");
    }
}

import java.io.*;
import java.sql.*;

/**
 * pgjdbc's fetch size over a paged resource. Run as a single-file program:
 *   java -cp /usr/share/java/postgresql.jar FetchSize.java jdbc:postgresql://host:port/scratchpad?...
 * It reads the plain SELECT's rows, then the same rows with setFetchSize(10) (autocommit
 * off: a portal read ten rows at a time). After the first ten it prints "first: …" and
 * waits for a line on stdin, so that the test can count the upstream's pages then. Every
 * line printed is "key: value".
 */
public class FetchSize {
    static final String SQL = "SELECT id, label FROM paged";

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        try (Connection c = DriverManager.getConnection(args[0])) {
            StringBuilder plain = new StringBuilder();
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(SQL)) {
                while (rs.next()) plain.append(rs.getLong(1)).append(',').append(rs.getString(2)).append(';');
            }
            System.out.println("plain: " + plain.length());
            System.out.flush();
            in.readLine();  // the test counts the plain read's pages, then resets them

            c.setAutoCommit(false);
            StringBuilder fetched = new StringBuilder();
            int n = 0;
            try (PreparedStatement s = c.prepareStatement(SQL)) {
                s.setFetchSize(10);
                try (ResultSet rs = s.executeQuery()) {
                    while (rs.next()) {
                        fetched.append(rs.getLong(1)).append(',').append(rs.getString(2)).append(';');
                        n++;
                        if (n == 10) {
                            System.out.println("first: " + n);
                            System.out.flush();
                            in.readLine();  // the test counts the pages asked for so far
                        }
                    }
                }
            }
            c.commit();
            System.out.println("rows: " + n);
            System.out.println("same: " + fetched.toString().equals(plain.toString()));
        }
    }
}

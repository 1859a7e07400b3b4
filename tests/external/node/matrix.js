// The client matrix through node-postgres (pg). Usage: node matrix.js <connection-uri>
// Prints one JSON object; tests/external/test_node_pg.py asserts on it.
'use strict';
const { Client, Pool } = require('pg');

async function main() {
  const uri = process.argv[2];
  const out = {};
  const client = new Client({ connectionString: uri });
  const notices = [];
  client.on('notice', (n) => notices.push(n.message));
  await client.connect();

  // discovery
  out.tables = (await client.query(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'glove' ORDER BY 1",
  )).rows.map((r) => r.table_name);
  out.columns = (await client.query(
    "SELECT column_name, data_type, is_nullable FROM information_schema.columns " +
    "WHERE table_schema = 'glove' AND table_name = 'web' ORDER BY ordinal_position",
  )).rows;
  out.comment = (await client.query(
    "SELECT col_description('glove.web'::regclass, 1) AS d",
  )).rows[0].d;

  // a resource read with a pushed-down key (simple protocol: no values)
  out.read = (await client.query(
    "SELECT rank, title FROM web WHERE query = 'postgresql' ORDER BY rank LIMIT 2",
  )).rows;

  // parameterised (extended protocol), unnamed then named and reused
  const byId = await client.query('SELECT id, name, price FROM items WHERE id = $1', [7]);
  out.param = { rows: byId.rows, command: byId.command, rowCount: byId.rowCount,
                fields: byId.fields.map((f) => [f.name, f.dataTypeID]) };
  out.paramWeb = (await client.query(
    'SELECT title FROM web WHERE query = $1 ORDER BY rank LIMIT 1', ['postgresql'])).rows;
  out.named = [];
  for (const id of [1, 2, 3]) {
    const r = await client.query({ name: 'item-by-id', text: 'SELECT name FROM items WHERE id = $1',
                                   values: [id] });
    out.named.push(r.rows[0].name);
  }
  out.arrayMode = (await client.query({ text: 'SELECT id, name FROM items WHERE id IN ($1, $2) ORDER BY id',
                                         values: [4, 5], rowMode: 'array' })).rows;
  const bin = await client.query({ text: 'SELECT id, price, name FROM items WHERE id = $1',
                                    values: [8], binary: true });
  out.binary = { row: bin.rows[0], formats: bin.fields.map((f) => f.format) };

  // an untyped array parameter: one call per value, as Postgres types col = ANY($1)
  out.any = (await client.query('SELECT id FROM items WHERE id = ANY($1) ORDER BY id', [[5, 6]]))
    .rows.map((r) => r.id);

  // JOIN
  out.join = (await client.query(
    'SELECT items.id, items.name, tasks.title FROM items JOIN tasks ON tasks.id = items.id ORDER BY items.id',
  )).rows;

  // several statements in one simple Query
  out.multi = (await client.query('SELECT 1 AS a; SELECT 2 AS b')).map((r) => r.rows[0]);

  // staged write and COMMIT
  notices.length = 0;
  out.write = {};
  out.write.begin = (await client.query('BEGIN')).command;
  const ins = await client.query('INSERT INTO emails (to_addr, subject) VALUES ($1, $2)',
                                 ['node@example.org', 'from node']);
  out.write.insert = [ins.command, ins.rowCount];
  out.write.staged = (await client.query(
    'SELECT resource, verb, status FROM scratchpad.staged')).rows;
  out.write.commit = (await client.query('COMMIT')).command;
  out.write.after = (await client.query('SELECT count(*)::int AS n FROM scratchpad.staged')).rows[0].n;
  out.write.notices = notices.slice();

  // an error, then the same connection again
  out.errors = [];
  for (const sql of ['SELECT * FROM web', 'SELECT nope FROM items', 'SELEC 1', 'DROP TABLE items']) {
    try {
      await client.query(sql);
      out.errors.push(null);
    } catch (e) {
      out.errors.push(e.code);
    }
  }
  try {
    await client.query('SELECT name FROM items WHERE id = $1', ['not a number']);
  } catch (e) {
    out.errors.push(e.code);
  }
  try {
    await client.query('SELECT count(*) FROM tasks WHERE status = $1', ['true']);
    out.literal = null;
  } catch (e) {
    out.literal = [e.code, e.message, e.detail, e.hint];
  }
  out.afterError = (await client.query('SELECT name FROM items WHERE id = $1', [100])).rows[0].name;

  // an error inside a transaction aborts it until ROLLBACK
  await client.query('BEGIN');
  const txCodes = [];
  for (const q of [['SELECT nope FROM items', []], ['SELECT name FROM items WHERE id = $1', [1]]]) {
    try { await client.query(q[0], q[1]); txCodes.push(null); } catch (e) { txCodes.push(e.code); }
  }
  out.txErrors = txCodes;
  out.rollback = (await client.query('ROLLBACK')).command;
  out.afterRollback = (await client.query('SELECT 1 AS one')).rows[0].one;

  // UPDATE … RETURNING with the key bound: the row comes back (staged, then discarded)
  await client.query('BEGIN');
  const upd = await client.query('UPDATE tasks SET status = $1 WHERE id = $2 RETURNING id, title, status',
                                 ['done', 2]);
  out.returning = { command: upd.command, rowCount: upd.rowCount, rows: upd.rows };
  await client.query('ROLLBACK');

  // an error that Parse raises aborts the transaction too: COMMIT answers ROLLBACK
  notices.length = 0;
  await client.query('BEGIN');
  await client.query('INSERT INTO emails (to_addr, subject) VALUES ($1, $2)', ['x@example.org', 'never sent']);
  const parseCodes = [];
  for (const q of [['SELEC $1', [1]], ['SELECT $1::int AS one', [1]]]) {
    try { await client.query(q[0], q[1]); parseCodes.push(null); } catch (e) { parseCodes.push(e.code); }
  }
  out.parseErrorTx = { codes: parseCodes, commit: (await client.query('COMMIT')).command,
                       notices: notices.slice() };
  await client.end();

  // a pool, queries in parallel
  const pool = new Pool({ connectionString: uri, max: 3 });
  const ids = [10, 20, 30, 40, 50, 60];
  const names = await Promise.all(ids.map((id) =>
    pool.query('SELECT name FROM items WHERE id = $1', [id]).then((r) => r.rows[0].name)));
  out.pool = names;
  await pool.end();

  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`matrix.js failed: ${e.stack || e}\n`);
  process.exit(1);
});

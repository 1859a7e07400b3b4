// node-postgres' Cursor (pg-cursor) over a paged resource: the plain SELECT's rows, then
// the same rows read ten at a time. After the first read of ten it prints one JSON line
// and waits for a line on stdin, so that the test can count the upstream's pages then.
// Run with NODE_PATH at the node-postgres install (tests/external/node/node_modules).
const { Client } = require("pg");
const Cursor = require("pg-cursor");
const readline = require("readline");

const SQL = "SELECT id, label FROM paged";
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

async function main() {
  const client = new Client({ connectionString: process.argv[2] });
  await client.connect();
  const plain = (await client.query(SQL)).rows.map((r) => `${r.id},${r.label}`);
  say({ plain: plain.length });
  await lines.next();  // the test counts the plain read's pages, then resets them

  const cursor = client.query(new Cursor(SQL));
  const first = await cursor.read(10);
  say({ first: first.length });
  await lines.next();  // the test counts the pages asked for so far
  const rows = first.slice();
  for (;;) {
    const more = await cursor.read(1000);
    if (more.length === 0) break;
    rows.push(...more);
  }
  await cursor.close();
  const got = rows.map((r) => `${r.id},${r.label}`);
  say({ rows: got.length, same: JSON.stringify(got) === JSON.stringify(plain) });
  await client.end();
}

main().catch((err) => {
  process.stderr.write(`${err.code || ""} ${err.message}\n`);
  process.exit(1);
});

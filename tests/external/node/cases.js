// The cases of tests/clients/fix_matrix.py through node-postgres (pg), in one process.
// Usage: node cases.js <connection-uri>  with stdin a JSON list of
//   {"app": application_name, "mode": "simple" | "extended" | "prepared", "statements": [sql…]}
// Each entry runs on its own connection. Prints one JSON object: app -> {rows, notices, errors},
// rows the first column of every row, notices [message, hint], errors [code, message, hint].
// Modes: simple (a query without values), extended (queryMode 'extended': the unnamed
// statement), prepared (a named query).
'use strict';
const { Client } = require('pg');

async function runCase(uri, entry, n) {
  const seen = { rows: [], notices: [], errors: [] };
  const client = new Client({ connectionString: uri, application_name: entry.app });
  client.on('notice', (m) => seen.notices.push([m.message, m.hint ?? null]));
  await client.connect();
  try {
    for (const [i, text] of entry.statements.entries()) {
      const query = { text, rowMode: 'array' };
      if (entry.mode === 'extended') query.queryMode = 'extended';
      if (entry.mode === 'prepared') query.name = `matrix-${n}-${i}`;
      try {
        const result = await client.query(query);
        for (const row of result.rows || []) seen.rows.push(String(row[0]));
      } catch (e) {
        if (!e.code) throw e;
        seen.errors.push([e.code, e.message, e.hint ?? null]);
      }
    }
  } finally {
    await client.end();
  }
  return seen;
}

async function main() {
  const uri = process.argv[2];
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const out = {};
  for (const [n, entry] of JSON.parse(input).entries()) {
    out[entry.app] = await runCase(uri, entry, n);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`cases.js failed: ${e.stack || e}\n`);
  process.exit(1);
});

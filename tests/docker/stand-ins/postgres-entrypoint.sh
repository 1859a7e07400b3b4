#!/bin/sh
# The stand-in for the postgres image's entry point, as far as docker-compose.yml
# uses it: on an empty PGDATA, initdb with POSTGRES_INITDB_ARGS, POSTGRES_USER as the
# superuser with POSTGRES_PASSWORD, POSTGRES_DB made, every host allowed to sign in
# with scram-sha-256; then postgres on every address, as the postgres user.
set -eu
export PGDATA="${PGDATA:-/var/lib/postgresql/data}"
POSTGRES_USER="${POSTGRES_USER:-postgres}"
POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"

if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?the postgres image needs POSTGRES_PASSWORD}"
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    # The image splits POSTGRES_INITDB_ARGS into words the same way.
    # shellcheck disable=SC2086
    initdb --username="$POSTGRES_USER" --pwfile="$pwfile" ${POSTGRES_INITDB_ARGS:-}
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
    if [ "$POSTGRES_DB" != postgres ]; then
        PGPASSWORD="$POSTGRES_PASSWORD" psql -X -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" \
            -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\""
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop
fi
exec postgres -c listen_addresses='*' "$@"

#!/usr/bin/env bash
# PostgreSQL 16 + pgvector for the tests, from PyPI's `pgserver` wheel (a
# full server build with vector.so; Debian's packages here have no pgvector).
#
#   scripts/postgres.sh start DIR   install if needed, initdb a throwaway data
#                                   directory under DIR, start on 127.0.0.1 on a
#                                   free port; prints the URL last
#   scripts/postgres.sh stop DIR    stop it and delete the data directory
#
# The server binaries are kept in $KEN_PG_HOME (default ~/.cache/ken-pg, or
# /var/cache/ken-pg for root, whose home the server's user cannot enter).
# initdb and postgres refuse to run as root: as root they run as the
# `postgres` user (created when missing).
set -euo pipefail
cmd=${1:?start|stop}; dir=${2:?a directory}
if [ "$(id -u)" -eq 0 ]; then default_home=/var/cache/ken-pg; else default_home=$HOME/.cache/ken-pg; fi
PG_HOME=${KEN_PG_HOME:-$default_home}
VERSION=0.1.4
bin=$PG_HOME/pgserver/pginstall/bin

as_pg() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

install() {
    [ -x "$bin/postgres" ] && return
    local tmp; tmp=$(mktemp -d)
    python3 -m pip download --quiet --no-deps --only-binary=:all: "pgserver==$VERSION" -d "$tmp" >&2
    mkdir -p "$PG_HOME"
    # unzip keeps the exec bits (Python's zipfile does not); the binaries need
    # pgserver.libs/ beside pgserver/
    unzip -q -o "$tmp"/pgserver-*.whl -d "$PG_HOME"
    rm -rf "$tmp"
    [ -x "$bin/postgres" ] || { echo "pgserver wheel has no postgres binary" >&2; exit 1; }
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

case $cmd in
start)
    command -v unzip >/dev/null || { echo "unzip is required" >&2; exit 1; }
    install
    if [ "$(id -u)" -eq 0 ]; then
        id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
        chmod -R o+rX "$PG_HOME"
    fi
    mkdir -p "$dir"
    data=$dir/pgdata
    rm -rf "$data"; mkdir -p "$data"
    # the data directory's parents must be traversable by the server's user
    chmod 755 "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$data"
    as_pg "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --no-locale >/dev/null
    port=$(free_port)
    as_pg "$bin/pg_ctl" -D "$data" -w -l "$data/log" \
        -o "-h 127.0.0.1 -p $port -k $data -c fsync=off -c synchronous_commit=off -c max_connections=200" start >/dev/null
    as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qAt \
        -c "CREATE EXTENSION IF NOT EXISTS vector" >/dev/null
    echo "$port" > "$dir/port"
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
stop)
    data=$dir/pgdata
    if [ -f "$data/postmaster.pid" ]; then
        as_pg "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null || true
    fi
    rm -rf "$data" "$dir/port"
    ;;
*) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac

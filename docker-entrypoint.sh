#!/bin/sh
# The image's entrypoint: checks that the bot can write its SQLite folder, then runs
# the command (the bot by default). Without the check, a host folder created by root
# and mounted at /data ends, after the start-up, in SQLite's bare "unable to open
# database file"; here it ends in one line that says which owner the folder needs.
set -eu
if [ -z "${DATABASE_URL:-}" ] && [ -n "${HOKM_DATA_DIR:-}" ]; then
    dir=$HOKM_DATA_DIR
    writable=yes
    if [ ! -d "$dir" ] || [ ! -w "$dir" ]; then
        writable=no
    fi
    # SQLite writes the database and, in WAL mode, these two files beside it.
    for file in "$dir/hokm.sqlite3" "$dir/hokm.sqlite3-wal" "$dir/hokm.sqlite3-shm"; do
        if [ -e "$file" ] && [ ! -w "$file" ]; then
            writable=no
        fi
    done
    if [ "$writable" = no ]; then
        echo "hokm: $dir is not a folder that uid $(id -u) can write: on the host, run chown -R $(id -u):$(id -g) on the folder mounted at $dir (or mount a named volume: -v hokm-data:$dir)" >&2
        exit 2
    fi
fi
exec "$@"

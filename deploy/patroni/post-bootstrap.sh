#!/bin/sh
# Run once by Patroni on the node that creates the cluster, with a connection string as $1: the
# login and database repoadmin uses (its tables come from the server's own migrations).
set -eu
psql -v ON_ERROR_STOP=1 -v password="${REPOADMIN_DB_PASSWORD:-repoadmin}" "$1" <<'SQL'
create role repoadmin login password :'password';
create database repoadmin owner repoadmin;
SQL

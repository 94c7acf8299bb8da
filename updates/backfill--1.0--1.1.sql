/* updates/backfill--1.0--1.1.sql: backfill 1.0 to 1.1 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION backfill UPDATE TO '1.1'" to load this file. \quit

-- 1.1's library refuses to run under another version's declarations (BackfillCheckVersion):
-- no object changes for that.

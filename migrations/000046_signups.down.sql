-- Sign-ups waiting for their address to be confirmed are dropped with the
-- table; their links stop working.
DROP TABLE IF EXISTS signups;

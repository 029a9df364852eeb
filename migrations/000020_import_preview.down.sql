ALTER TABLE imports DROP COLUMN preview;

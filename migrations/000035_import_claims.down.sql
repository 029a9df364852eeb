ALTER TABLE imports DROP COLUMN claim_pid;

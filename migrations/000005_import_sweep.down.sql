-- The sweep of interrupted imports works without its index, only slower.
DROP INDEX IF EXISTS imports_processing_idx;

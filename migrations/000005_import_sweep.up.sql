-- Imports whose importer died mid-file are found and marked failed by a
-- periodic sweep over every org (store FailInterruptedImports): an import is
-- alive while its connection holds an advisory lock keyed by its id. The
-- sweep reads only the imports still processing, a handful at any time, so
-- this partial index keeps it from scanning the whole history.
CREATE INDEX IF NOT EXISTS imports_processing_idx ON imports (org_id, id) WHERE status = 'processing';

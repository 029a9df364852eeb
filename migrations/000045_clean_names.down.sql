-- Nothing to undo: the characters dropped from names are not kept.
SELECT 1;

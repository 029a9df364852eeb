DROP FUNCTION burnrate_distribute(regclass);

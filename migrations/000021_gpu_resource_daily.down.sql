DROP TRIGGER IF EXISTS gpu_resource_daily_insert ON charges;
DROP TRIGGER IF EXISTS gpu_resource_daily_update ON charges;
DROP TRIGGER IF EXISTS gpu_resource_daily_delete ON charges;
DROP FUNCTION IF EXISTS gpu_resource_daily_sync();
DROP FUNCTION IF EXISTS gpu_resource_daily_add(int);
DROP TABLE IF EXISTS gpu_resource_daily;

package savings

// StoredComputed is Stored, also saying whether it computed the report
// rather than read the stored one.
var StoredComputed = stored

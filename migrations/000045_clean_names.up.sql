-- Names are cleaned as they come in (package label): line breaks and tabs
-- become spaces, other control characters and the bidirectional formatting
-- characters (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) are
-- dropped, and the ends trimmed. A line break in a name showed as a line of
-- its own in the plain text of mail (a fake "Reply-To:"), and an override
-- reversed how a file name reads. This cleans the names kept before, the
-- same way. A connection whose cleaned name another of its org already has
-- keeps its name (names are unique per org).
CREATE FUNCTION pg_temp.clean_name(s text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT btrim(regexp_replace(regexp_replace(s,
        E'\r\n|[\r\n\t\u000b\u000c\u0085\u2028\u2029]', ' ', 'g'),
        E'[\u0001-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]', '', 'g'), ' ')
$$;

UPDATE users SET name = pg_temp.clean_name(name) WHERE name <> pg_temp.clean_name(name);
UPDATE orgs SET name = pg_temp.clean_name(name) WHERE name <> pg_temp.clean_name(name);
UPDATE api_tokens SET name = pg_temp.clean_name(name) WHERE name <> pg_temp.clean_name(name);
UPDATE budgets SET name = pg_temp.clean_name(name) WHERE name <> pg_temp.clean_name(name);
UPDATE scenarios SET name = pg_temp.clean_name(name) WHERE name <> pg_temp.clean_name(name);
UPDATE imports SET file_name = pg_temp.clean_name(file_name) WHERE file_name <> pg_temp.clean_name(file_name);
UPDATE connections c SET name = pg_temp.clean_name(c.name)
WHERE c.name <> pg_temp.clean_name(c.name)
    AND NOT EXISTS (SELECT FROM connections o
                    WHERE o.org_id = c.org_id AND o.id <> c.id AND lower(o.name) = lower(pg_temp.clean_name(c.name)));

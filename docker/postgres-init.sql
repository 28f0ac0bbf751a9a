-- The lab's table, as the local lab seeds it (orchestrator/lab/local/dataServices.ts):
-- `metabench run --runtime docker` reseeds it with the experiment's lab.db.keys.
CREATE TABLE items (id integer PRIMARY KEY, value text NOT NULL);
INSERT INTO items SELECT g, md5(g::text) FROM generate_series(0, 10000) g;
ANALYZE items;

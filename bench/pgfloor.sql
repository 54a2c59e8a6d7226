-- pgfloor.sql: the statements rentapi sends PostgreSQL for one POST
-- /v1/meter-readings with an Idempotency-Key (as logged with
-- log_statement=all at e6f2108), in the same two pipelined round trips,
-- for pgbench (see pgfloor.sh). The service passes every value as a
-- parameter; here the ids of one room of the seeded landlords come from
-- bench_map (one primary-key read a transaction that the service does not
-- make), and each reading, event and key is new: :run is the run, :n
-- counts a client's transactions. The clock moves by one instead of to
-- the service's time.
\set n :n + 1
\set k random(:lo, :hi)
\set lock (:k * 1000 + :client_id) * 1000000 + :n
SELECT lid, rid, pid, aid, app FROM bench_map WHERE k = :k \gset
\startpipeline
BEGIN;
SELECT version / (CASE WHEN version = :access THEN 1 ELSE 0 END) FROM access_version;
SELECT 1 / (CASE WHEN pg_try_advisory_xact_lock(:lock) THEN 1 ELSE 0 END);
WITH changed AS (UPDATE landlords SET clock = clock + 1, data_version = data_version + 1 WHERE id = :lid AND clock < 9000000000000000000 AND clock_offset = 0 RETURNING 1) SELECT 1 / (CASE WHEN count(*) = 1 THEN 1 ELSE 0 END) FROM changed;
SELECT r.id, r.number, r.property_id, r.status, p.electricity_rate, p.water_billing, p.water_rate, p.water_flat_amount, (SELECT string_agg(m.id || ' ' || m.month || ' ' || m.e_previous || ' ' || m.e_current || ' ' || (CASE WHEN m.e_rollover THEN 1 ELSE 0 END) || ' ' || m.w_previous || ' ' || m.w_current || ' ' || (CASE WHEN m.w_rollover THEN 1 ELSE 0 END), ' ') FROM meter_readings m WHERE m.room_id = r.id AND m.month >= COALESCE((SELECT max(x.month) FROM meter_readings x WHERE x.room_id = r.id AND x.month < 'm' || :run || lpad(:n::text, 12, '0') || lpad(:client_id::text, 3, '0')), 'm' || :run || lpad(:n::text, 12, '0') || lpad(:client_id::text, 3, '0'))) FROM rooms r JOIN properties p ON p.id = r.property_id WHERE r.id IN (:rid) AND r.landlord_id || '' = :lid;
\endpipeline
\startpipeline
SELECT e.id, e.enabled_events, a.id, a.revoked_at IS NULL, a.scopes, app.scopes FROM webhook_endpoints e JOIN applications app ON app.id = e.application_id JOIN accounts a ON a.application_id = e.application_id WHERE a.landlord_id = :lid AND e.mode = 'live' AND e.status = 'enabled' FOR KEY SHARE OF e;
INSERT INTO meter_readings (id, landlord_id, property_id, room_id, month, e_previous, e_current, e_rollover, e_rate, w_previous, w_current, w_rollover, w_rate, w_billing, w_flat_amount, flags, created_at, updated_at) VALUES ('mrd_' || :run || '_' || :client_id || '_' || :n , :lid, :pid, :rid, 'm' || :run || lpad(:n::text, 12, '0') || lpad(:client_id::text, 3, '0'), 120500, 99999000, false, 800, 5000, 9999000, false, 1800, 'metered', NULL, '[]', 1795996074128, 1795996074128);
INSERT INTO events (id, landlord_id, mode, type, data, created_at, application_id) VALUES ('evt_' || :run || '_' || :client_id || '_' || :n , :lid, 'live', 'meter.reading.created', :data, 1795996074128, NULL);
WITH changed AS (INSERT INTO idempotency_keys (application_id, account_id, key, fingerprint, locked_at, created_at, expires_at, done, status_code, header, body) VALUES (:app, :aid, 'k' || :run || '_' || :client_id || '_' || :n , 'fc7d821b4087973fab2b555c5a7c134a72718de6d489588785b29537e34691c1', 1795996074128, 1795996074128, 1796082474128, TRUE, 201, :hdr, :body) ON CONFLICT DO NOTHING RETURNING 1) SELECT 1 / (CASE WHEN count(*) = 1 THEN 1 ELSE 0 END) FROM changed;
COMMIT;
\endpipeline

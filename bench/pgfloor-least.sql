-- pgfloor-least.sql: the least a write of a reading can send PostgreSQL,
-- for pgfloor.sh (SQL=bench/pgfloor-least.sql): pgfloor.sql without the
-- key's access-version check, its advisory lock and the webhook endpoints'
-- read, all in one pipelined round trip. What is left is what the API
-- promises for every write: the landlord's data version moved on (ETags,
-- the order of its writes), the room's last reading read, the reading,
-- its event, and the answer kept under the Idempotency-Key, committed
-- together.
\set n :n + 1
\set k random(:lo, :hi)
SELECT lid, rid, pid, aid, app FROM bench_map WHERE k = :k \gset
\startpipeline
BEGIN;
WITH changed AS (UPDATE landlords SET clock = clock + 1, data_version = data_version + 1 WHERE id = :lid AND clock < 9000000000000000000 AND clock_offset = 0 RETURNING 1) SELECT 1 / (CASE WHEN count(*) = 1 THEN 1 ELSE 0 END) FROM changed;
SELECT r.id, r.number, r.property_id, r.status, p.electricity_rate, p.water_billing, p.water_rate, p.water_flat_amount, (SELECT string_agg(m.id || ' ' || m.month || ' ' || m.e_previous || ' ' || m.e_current || ' ' || (CASE WHEN m.e_rollover THEN 1 ELSE 0 END) || ' ' || m.w_previous || ' ' || m.w_current || ' ' || (CASE WHEN m.w_rollover THEN 1 ELSE 0 END), ' ') FROM meter_readings m WHERE m.room_id = r.id AND m.month >= COALESCE((SELECT max(x.month) FROM meter_readings x WHERE x.room_id = r.id AND x.month < 'm' || :run || lpad(:n::text, 12, '0') || lpad(:client_id::text, 3, '0')), 'm' || :run || lpad(:n::text, 12, '0') || lpad(:client_id::text, 3, '0'))) FROM rooms r JOIN properties p ON p.id = r.property_id WHERE r.id IN (:rid) AND r.landlord_id || '' = :lid;
INSERT INTO meter_readings (id, landlord_id, property_id, room_id, month, e_previous, e_current, e_rollover, e_rate, w_previous, w_current, w_rollover, w_rate, w_billing, w_flat_amount, flags, created_at, updated_at) VALUES ('mrd_' || :run || '_' || :client_id || '_' || :n , :lid, :pid, :rid, 'm' || :run || lpad(:n::text, 12, '0') || lpad(:client_id::text, 3, '0'), 120500, 99999000, false, 800, 5000, 9999000, false, 1800, 'metered', NULL, '[]', 1795996074128, 1795996074128);
INSERT INTO events (id, landlord_id, mode, type, data, created_at, application_id) VALUES ('evt_' || :run || '_' || :client_id || '_' || :n , :lid, 'live', 'meter.reading.created', :data, 1795996074128, NULL);
WITH changed AS (INSERT INTO idempotency_keys (application_id, account_id, key, fingerprint, locked_at, created_at, expires_at, done, status_code, header, body) VALUES (:app, :aid, 'k' || :run || '_' || :client_id || '_' || :n , 'fc7d821b4087973fab2b555c5a7c134a72718de6d489588785b29537e34691c1', 1795996074128, 1795996074128, 1796082474128, TRUE, 201, :hdr, :body) ON CONFLICT DO NOTHING RETURNING 1) SELECT 1 / (CASE WHEN count(*) = 1 THEN 1 ELSE 0 END) FROM changed;
COMMIT;
\endpipeline

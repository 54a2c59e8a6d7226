-- The wrk script of bench/compare.sh's writes, in one of two modes, chosen
-- by the first argument after "--":
--
--   readings DATA OFFSET THREADS RUN
--     POST /v1/meter-readings, every request a new room and month, so each
--     is a real create (201), and a new Idempotency-Key. DATA is the Lua
--     table `cycle lua` prints (the landlords' keys, rooms and first new
--     months); requests go round-robin over the landlords, then over each
--     landlord's rooms, then months, starting OFFSET months after each
--     landlord's first new one. THREADS is wrk's -t, RUN is unique to the
--     run (keys are RUN-<n>).
--   body FILE
--     POST the bytes of FILE as JSON (PocketBase's create record).
--
-- Either way every status is counted: a benchmark of errors is worthless.
-- done prints "status CODE COUNT" for each code, and in readings mode
-- "months N", how far the next run over the same rooms must move OFFSET.

local threads = {}
local nthreads = 0

function setup(thread)
	thread:set("tid", nthreads)
	nthreads = nthreads + 1
	table.insert(threads, thread)
end

function init(args)
	mode = args[1]
	statuses = {}
	months = 0 -- months after OFFSET this thread has reached
	if mode == "readings" then
		data = dofile(args[2])
		offset = tonumber(args[3])
		stride = tonumber(args[4])
		run = args[5]
		n = 0
	elseif mode == "body" then
		local f = assert(io.open(args[2], "rb"))
		local body = f:read("*a")
		f:close()
		wrk.headers["Content-Type"] = "application/json"
		fixed = wrk.format("POST", nil, nil, body)
	else
		error("wrk.lua: the mode is readings or body")
	end
end

function request()
	if fixed then
		return fixed
	end
	local k = n * stride + tid
	n = n + 1
	local l = data.landlords[k % #data.landlords + 1]
	local j = math.floor(k / #data.landlords)
	local m = math.floor(j / #l.rooms)
	months = math.max(months, m + 1)
	local month = l.start + offset + m
	local body = data.body:gsub("{room}", l.rooms[j % #l.rooms + 1]):gsub("{month}",
		string.format("%04d-%02d", math.floor(month / 12), month % 12 + 1))
	return wrk.format("POST", nil, {
		["Authorization"] = "Bearer " .. l.key,
		["Content-Type"] = "application/json",
		["Idempotency-Key"] = run .. "-" .. k,
	}, body)
end

function response(status, headers, body)
	statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
	local total, reached = {}, 0
	for _, t in ipairs(threads) do
		for code, count in pairs(t:get("statuses")) do
			total[code] = (total[code] or 0) + count
		end
		reached = math.max(reached, t:get("months"))
	end
	for code, count in pairs(total) do
		io.write(string.format("status %d %d\n", code, count))
	end
	if reached > 0 then
		io.write(string.format("months %d\n", reached))
	end
end

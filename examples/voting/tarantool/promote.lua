-- Failover for the replica-set mode, after the master died: makes the most advanced surviving
-- replica the master, the way Tarantool 2.6 allows (it has no elections and no
-- box.ctl.promote()).
--
--   tarantool promote.lua ADMIN_URI [ADMIN_URI...]     the surviving instances
--
-- Environment: VOTING_REPLICATOR_PASSWORD (replicator), the password of the 'replicator' user
-- the other survivors use to replicate from the new master.
-- Prints one JSON line: {"promoted": "<listen>", "id": <box.info.id>, "dead": <id>, "seconds": <s>}.
local netbox = require('net.box')
local fiber = require('fiber')
local json = require('json')

local function fail(msg)
    io.stderr:write('promote.lua: ', msg, '\n')
    os.exit(1)
end

if #arg < 1 then
    fail('usage: tarantool promote.lua ADMIN_URI [ADMIN_URI...]')
end
local started = fiber.clock()
local nodes = {}
for _, uri in ipairs(arg) do
    local c = netbox.connect(uri, {connect_timeout = 5})
    if not c:is_connected() then
        fail('cannot connect to ' .. uri .. ': ' .. tostring(c.error))
    end
    local id, vclock, listen = c:eval('return box.info.id, box.info.vclock, box.cfg.listen')
    table.insert(nodes, {conn = c, id = id, vclock = vclock, listen = listen})
end

-- The dead master: the registered instance (box.space._cluster) that is not a survivor.
local survivors = {}
for _, n in ipairs(nodes) do survivors[n.id] = true end
local dead = nil
for _, t in ipairs(nodes[1].conn:eval('return box.space._cluster:select{}')) do
    if not survivors[t[1]] then
        if dead ~= nil then fail('more than one instance is missing: give every survivor') end
        dead = t[1]
    end
end
if dead == nil then fail('every registered instance was given: none died') end

-- With a quorum below the set size, a write the dead master acknowledged may exist on a
-- single replica: only the one that received most of its rows is safe to promote.
local best = nodes[1]
for _, n in ipairs(nodes) do
    if (n.vclock[dead] or 0) > (best.vclock[dead] or 0) then best = n end
end

-- The others replicate from it: they get what they missed, and it sees their vclocks.
local password = os.getenv('VOTING_REPLICATOR_PASSWORD') or 'replicator'
best.conn:eval('box.cfg{replication = {}}')
local followers = {}
for _, n in ipairs(nodes) do
    if n ~= best then
        n.conn:eval('box.cfg{replication = {...}}', {'replicator:' .. password .. '@' .. best.listen})
        table.insert(followers, n.id)
    end
end
local deadline = fiber.clock() + 30
while not best.conn:eval([[
    local dead, followers = ...
    local have = box.info.vclock[dead] or 0
    for _, id in ipairs(followers) do
        local r = box.info.replication[id]
        local d = r and r.downstream
        if d == nil or d.vclock == nil or (d.vclock[dead] or 0) < have then return false end
    end
    return true
]], {dead, followers}) do
    if fiber.clock() > deadline then fail('the other replicas did not catch up within 30 s') end
    fiber.sleep(0.01)
end

-- clear_synchro_queue on 2.6.0 waits 2 x replication_synchro_timeout for the dead master's
-- CONFIRM, then settles the rest itself. Run before the followers caught up, it was seen to
-- roll back writes the dead master had acknowledged (php/tarantool's FailoverTest). Only
-- then writes.
best.conn:eval([[
    local saved = box.cfg.replication_synchro_timeout
    box.cfg{replication_synchro_timeout = 0.25}
    box.ctl.clear_synchro_queue()
    box.cfg{replication_synchro_timeout = saved}
    box.cfg{read_only = false}
]])
print(json.encode({promoted = best.listen, id = best.id, dead = dead, seconds = fiber.clock() - started}))
os.exit(0)

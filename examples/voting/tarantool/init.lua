-- Tarantool side of the voting service: schema, seed data and stored procedures.
--
-- Environment:
--   VOTING_LISTEN          host:port (or a unix socket path) to serve IPROTO on  [127.0.0.1:3301]
--   VOTING_DATA_DIR        snapshots and WAL (memtx_dir = wal_dir)               [.]
--   VOTING_WAL_MODE        write | fsync | none                                  [write]
--   VOTING_MEMTX_MEMORY    bytes of tuple arena                                   [536870912]
--   VOTING_USER / VOTING_PASSWORD   the application's user                       [voting / voting]
--   VOTING_ADMIN_PASSWORD  when set, 'admin' may log in remotely (tests use it to inspect data)
--   VOTING_STICKERS        stickers seeded on first start                         [16000]
--   VOTING_LOG             log file; empty = stderr                               []
-- Replica-set mode (scripts/run.sh with APP=voting-replicas; see the README):
--   VOTING_REPLICATION     upstream URIs, comma-separated: this instance joins as a replica []
--   VOTING_READ_ONLY       1 = start read-only (a replica)                        [0]
--   VOTING_REPLICATOR_PASSWORD  creates the 'replicator' user replicas log in as  []
--   VOTING_SYNC            1 = votes, sessions and ratings are synchronous spaces (is_sync) [0]
--   VOTING_SYNCHRO_QUORUM  instances (master included) that must have a synchronous write
--                          before it is acknowledged                               [2]
--   VOTING_SYNCHRO_TIMEOUT seconds a synchronous write waits for its quorum before it is
--                          rolled back (the vote is then answered 503)             [2]
local fio = require('fio')
local uuid = require('uuid')
local log = require('log')

local function env(name, default)
    local v = os.getenv(name)
    if v == nil or v == '' then return default end
    return v
end

local listen = env('VOTING_LISTEN', '127.0.0.1:3301')
local data_dir = env('VOTING_DATA_DIR', '.')
local wal_mode = env('VOTING_WAL_MODE', 'write')
local nstickers = tonumber(env('VOTING_STICKERS', '16000'))
local images = 40 -- SVG files in public/stickers, referenced by id modulo this

if wal_mode ~= 'write' and wal_mode ~= 'fsync' and wal_mode ~= 'none' then
    error('VOTING_WAL_MODE must be write, fsync or none, got ' .. wal_mode)
end
if nstickers == nil or nstickers < 2 or nstickers > 10000000 then
    error('VOTING_STICKERS must be a number between 2 and 10000000')
end
if not fio.path.is_dir(data_dir) and not fio.mktree(data_dir) then
    error('cannot create VOTING_DATA_DIR ' .. data_dir)
end

local replication = {}
for uri in env('VOTING_REPLICATION', ''):gmatch('[^,%s]+') do
    table.insert(replication, uri)
end
local sync = env('VOTING_SYNC', '0') == '1'

-- No listen yet: clients must not see the schema half-built or the seed half-loaded.
-- A replica joins its master here (box.cfg returns once it has the data).
box.cfg{
    replication = #replication > 0 and replication or nil,
    read_only = env('VOTING_READ_ONLY', '0') == '1',
    replication_synchro_quorum = tonumber(env('VOTING_SYNCHRO_QUORUM', '2')),
    replication_synchro_timeout = tonumber(env('VOTING_SYNCHRO_TIMEOUT', '2')),
    memtx_dir = data_dir,
    wal_dir = data_dir,
    wal_mode = wal_mode,
    memtx_memory = tonumber(env('VOTING_MEMTX_MEMORY', '536870912')),
    log = env('VOTING_LOG', nil),
    -- Keep only a couple of snapshots around; the demo's data dir should not grow forever.
    checkpoint_count = 2,
}

-- Fixed ids so clients can address spaces without fetching the schema on every connect
-- (a PHP-FPM request opens a fresh connection each time).
local SPACE_STICKERS, SPACE_SESSIONS, SPACE_VOTES = 512, 513, 514

-- A deterministic spread of initial ratings (Knuth's multiplicative hash), so every fresh
-- database ranks the same stickers first and tests can recompute it.
local function initial_rating(id)
    -- Not the low bits: those follow id's own low bits (and so the sticker's name).
    return math.floor(((id * 2654435761) % 4294967296) / 256) % 10000
end

local adjectives = {'Happy', 'Grumpy', 'Sleepy', 'Brave', 'Shy', 'Fluffy', 'Sneaky', 'Jolly',
    'Lazy', 'Curious', 'Proud', 'Tiny', 'Wild', 'Calm', 'Dizzy', 'Noble'}
local animals = {'Raccoon', 'Fox', 'Cat', 'Owl', 'Panda', 'Frog', 'Bear', 'Otter', 'Hedgehog',
    'Penguin', 'Koala', 'Badger', 'Lynx', 'Seal', 'Duck', 'Wolf', 'Tiger', 'Sloth', 'Crab', 'Yak'}

local function sticker_name(id)
    return adjectives[id % #adjectives + 1] .. ' ' .. animals[math.floor(id / #adjectives) % #animals + 1]
end

local seeded = false
box.once('voting-schema-v1', function()
    seeded = true
    local stickers = box.schema.space.create('stickers', {id = SPACE_STICKERS, format = {
        {name = 'id', type = 'unsigned'},
        {name = 'pack', type = 'unsigned'},
        {name = 'name', type = 'string'},
        {name = 'image', type = 'string'},
        {name = 'rating', type = 'integer'},
    }})
    stickers:create_index('primary', {parts = {'id'}})
    -- id as the second part makes the order total, so top-N is stable between calls.
    stickers:create_index('rating', {parts = {'rating', 'id'}})

    local sessions = box.schema.space.create('sessions', {id = SPACE_SESSIONS, format = {
        {name = 'uuid', type = 'string'},
        {name = 'time', type = 'unsigned'},
        {name = 'ip', type = 'string'},
        {name = 'user_agent', type = 'string'},
    }})
    -- HASH: point lookups only, O(1) however many million sessions pile up.
    sessions:create_index('primary', {type = 'HASH', parts = {'uuid'}})

    box.schema.sequence.create('vote_id')
    local votes = box.schema.space.create('votes', {id = SPACE_VOTES, format = {
        {name = 'id', type = 'unsigned'},
        {name = 'session', type = 'string'},
        {name = 'lo', type = 'unsigned'},   -- the pair, smaller id first: one vote per pair
        {name = 'hi', type = 'unsigned'},   -- whichever way it went
        {name = 'winner', type = 'unsigned'},
        {name = 'time', type = 'unsigned'},
    }})
    votes:create_index('primary', {sequence = 'vote_id'})
    votes:create_index('pair', {type = 'HASH', parts = {'session', 'lo', 'hi'}})

    box.begin()
    for id = 1, nstickers do
        stickers:insert{id, math.floor((id - 1) / images) + 1, sticker_name(id),
            string.format('/stickers/%02d.svg', id % images), initial_rating(id)}
        if id % 1000 == 0 then
            box.commit()
            box.begin()
        end
    end
    box.commit()

    local user = env('VOTING_USER', 'voting')
    box.schema.user.create(user, {password = env('VOTING_PASSWORD', 'voting')})
    box.schema.user.grant(user, 'read', 'space', 'stickers')
    box.schema.user.grant(user, 'read,write', 'space', 'sessions')
    for _, f in ipairs({'voting_uuid', 'voting_top', 'voting_bottom', 'voting_vote'}) do
        -- setuid: the procedures may touch votes, which the user cannot reach directly.
        box.schema.func.create(f, {setuid = true})
        box.schema.user.grant(user, 'execute', 'function', f)
    end
end)

-- A snapshot right after seeding: with wal_mode=none nothing else would preserve the seed.
if seeded then
    box.snapshot()
end

-- Replica-set mode. Made synchronous only now: the seed, written before any replica exists,
-- could never collect a quorum.
local replicator_password = env('VOTING_REPLICATOR_PASSWORD', nil)
if replicator_password ~= nil and not box.info.ro then
    box.once('voting-replicator', function()
        box.schema.user.create('replicator', {password = replicator_password})
        box.schema.user.grant('replicator', 'replication')
    end)
end
if sync and not box.info.ro then
    box.once('voting-sync', function()
        for _, name in ipairs({'stickers', 'sessions', 'votes'}) do
            -- 2.6.0 has no space:alter(): set the flag in the space's definition.
            local def = box.space._space:get(box.space[name].id)
            local flags = def.flags
            flags.is_sync = true
            box.space._space:update(def.id, {{'=', 'flags', flags}})
        end
    end)
end

local function limit(n)
    if type(n) ~= 'number' or n < 1 or n > 100 or n ~= math.floor(n) then
        box.error{reason = 'n must be a whole number from 1 to 100', code = 10000}
    end
    return n
end

function voting_uuid()
    return uuid.str()
end

-- Highest rated first; ties by the larger id (the rating index read backwards). The second
-- value, the instance's id, shows which member of a replica set served the read.
function voting_top(n)
    return box.space.stickers.index.rating:select({}, {iterator = 'LE', limit = limit(n)}), box.info.id
end

function voting_bottom(n)
    return box.space.stickers.index.rating:select({}, {iterator = 'GE', limit = limit(n)}), box.info.id
end

-- One vote per session per unordered pair; the vote row and both rating changes commit in
-- one transaction (one WAL record), so a crash can never keep one without the others.
-- Returns 'ok', vote_id or an error word: bad_request, same_sticker, no_session,
-- unknown_sticker, already_voted.
function voting_vote(session, winner, loser, now)
    if type(session) ~= 'string' or type(winner) ~= 'number' or type(loser) ~= 'number'
            or type(now) ~= 'number' or winner < 0 or loser < 0 or now < 0 then
        return 'bad_request'
    end
    if winner == loser then
        return 'same_sticker'
    end
    local s = box.space
    return box.atomic(function()
        if s.sessions:get(session) == nil then
            return 'no_session'
        end
        if s.stickers:get(winner) == nil or s.stickers:get(loser) == nil then
            return 'unknown_sticker'
        end
        local lo, hi = math.min(winner, loser), math.max(winner, loser)
        if s.votes.index.pair:get{session, lo, hi} ~= nil then
            return 'already_voted'
        end
        local vote = s.votes:insert{box.NULL, session, lo, hi, winner, math.floor(now)}
        s.stickers:update(winner, {{'+', 'rating', 1}})
        s.stickers:update(loser, {{'-', 'rating', 1}})
        return 'ok', vote.id
    end)
end

local admin_password = env('VOTING_ADMIN_PASSWORD', nil)
if admin_password ~= nil and not box.info.ro then -- replicas get it from the master
    box.schema.user.passwd('admin', admin_password)
end

box.cfg{listen = listen}
log.info('voting: %d stickers, %d sessions, %d votes, wal_mode=%s, listening on %s, instance id %d%s',
    box.space.stickers:len(), box.space.sessions:len(), box.space.votes:len(), wal_mode, listen,
    box.info.id, box.info.ro and ' (read-only)' or '')

-- The Tarantool of TestFiberIOTarantool*: listens on the port in argv, lets guest call
-- anything, and counts on its side how many calls are inside at once (most).
local fiber = require('fiber')
box.cfg{listen = '127.0.0.1:' .. arg[1], work_dir = arg[2], log_level = 4, memtx_memory = 32 * 1024 * 1024}
box.schema.user.grant('guest', 'execute', 'universe', nil, {if_not_exists = true})

local inside, most, reached = 0, 0, false
local cond = fiber.cond()

local function enter()
    inside = inside + 1
    most = math.max(most, inside)
end

-- Waits until n calls are inside at once (or release()), at most 5 s: a client that
-- sends one call at a time never fills it. Answers how many were inside at most.
function gate(n)
    enter()
    if inside >= n then
        reached = true
        cond:broadcast()
    end
    local deadline = fiber.clock() + 5
    while not reached and fiber.clock() < deadline do
        cond:wait(deadline - fiber.clock())
    end
    inside = inside - 1
    return most
end

function release()
    reached = true
    cond:broadcast()
    return true
end

function slow(s)
    enter()
    fiber.sleep(s)
    inside = inside - 1
    return 'slept'
end

function inside_now() return inside end
function most_and_reset()
    local m = most
    most, reached = 0, false
    return m
end
function fail() error('boom from Lua') end

io.stdout:write('tarantool ready\n')
io.stdout:flush()

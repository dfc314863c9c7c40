-- The I/O-bound backend of bench scenario "fibers": every request waits 5 ms inside
-- Tarantool (a Lua fiber.sleep standing in for a slow query) and reads one tuple.
local fiber = require('fiber')
box.cfg{
    listen = os.getenv('IOBOUND_LISTEN') or '127.0.0.1:3301',
    wal_mode = 'none',
    memtx_dir = os.getenv('IOBOUND_DIR') or '.',
    log_level = 2,
    readahead = 1024 * 1024,
}
box.once('iobound', function()
    local s = box.schema.space.create('items', {format = {{'id', 'unsigned'}, {'name', 'string'}}})
    s:create_index('primary')
    for i = 1, 1000 do s:insert{i, 'item_' .. i} end
    box.schema.func.create('io_wait')
    box.schema.user.grant('guest', 'read,write,execute', 'universe')
end)

function io_wait(id)
    fiber.sleep(0.005)
    return box.space.items:get(id)
end

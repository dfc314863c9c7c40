-- The backend of bench scenario "fiberio": one procedure that waits inside Tarantool (a Lua
-- fiber.sleep standing in for a slow query), so the page that calls it is I/O-bound.
local fiber = require('fiber')
box.cfg{
    listen = os.getenv('FIBERIO_LISTEN') or '127.0.0.1:3301',
    wal_mode = 'none',
    memtx_dir = os.getenv('FIBERIO_DIR') or '.',
    log_level = 2,
    readahead = 1024 * 1024,
    net_msg_max = 4096,
}
box.once('fiberio', function()
    box.schema.func.create('fio_wait')
    box.schema.user.grant('guest', 'read,write,execute', 'universe')
end)

function fio_wait(seconds, id)
    fiber.sleep(seconds)
    return 'waited ' .. id
end

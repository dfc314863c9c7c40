<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

/**
 * @internal Whether ext/ferry's C codec (Ferry\Ext\msgpack_pack/unpack) serves Packer and
 * BufferUnpacker. It does when the extension is loaded, unless the ini setting
 * ferry.msgpack_php_only is on; each Packer and BufferUnpacker decides once, when built.
 */
final class Native
{
    public static function available(): bool
    {
        return \function_exists('Ferry\Ext\msgpack_unpack')
            && !\in_array(\strtolower((string) \ini_get('ferry.msgpack_php_only')), ['1', 'on', 'yes', 'true'], true);
    }
}

<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Protocol;

/** IPROTO numbers used by Tarantool 2.6 (src/box/iproto_constants.h). */
final class Iproto
{
    // Header keys.
    public const REQUEST_TYPE = 0x00;
    public const SYNC = 0x01;
    public const SCHEMA_VERSION = 0x05;

    // Body keys.
    public const SPACE_ID = 0x10;
    public const INDEX_ID = 0x11;
    public const LIMIT = 0x12;
    public const OFFSET = 0x13;
    public const ITERATOR = 0x14;
    public const INDEX_BASE = 0x15;
    public const KEY = 0x20;
    public const TUPLE = 0x21;
    public const FUNCTION_NAME = 0x22;
    public const USER_NAME = 0x23;
    public const EXPR = 0x27;
    public const OPS = 0x28;
    public const OPTIONS = 0x2b;
    public const DATA = 0x30;
    public const ERROR_24 = 0x31;
    public const METADATA = 0x32;
    public const BIND_METADATA = 0x33;
    public const BIND_COUNT = 0x34;
    public const SQL_TEXT = 0x40;
    public const SQL_BIND = 0x41;
    public const SQL_INFO = 0x42;
    public const STMT_ID = 0x43;
    public const ERROR = 0x52;

    // Request / response types.
    public const OK = 0x00;
    public const SELECT = 1;
    public const INSERT = 2;
    public const REPLACE = 3;
    public const UPDATE = 4;
    public const DELETE = 5;
    public const AUTH = 7;
    public const EVAL = 8;
    public const UPSERT = 9;
    public const CALL = 10;
    public const EXECUTE = 11;
    public const PREPARE = 13;
    public const PING = 64;
    public const CHUNK = 0x80;
    public const TYPE_ERROR = 0x8000;

    // SQL_INFO and METADATA map keys.
    public const SQL_INFO_ROW_COUNT = 0;
    public const SQL_INFO_AUTOINCREMENT_IDS = 1;
    public const FIELD_NAME = 0;
    public const FIELD_TYPE = 1;

    // Error codes the connector reacts to (src/box/errcode.h).
    public const ER_READONLY = 7;
    public const ER_NO_SUCH_SPACE = 36;
    public const ER_WRONG_SCHEMA_VERSION = 109;
    public const ER_NO_SUCH_INDEX_NAME = 77;

    public const VSPACE = 281;
    public const VINDEX = 289;

    public const TYPE_NAMES = [
        self::SELECT => 'SELECT', self::INSERT => 'INSERT', self::REPLACE => 'REPLACE',
        self::UPDATE => 'UPDATE', self::DELETE => 'DELETE', self::AUTH => 'AUTH', self::EVAL => 'EVAL',
        self::UPSERT => 'UPSERT', self::CALL => 'CALL', self::EXECUTE => 'EXECUTE',
        self::PREPARE => 'PREPARE', self::PING => 'PING',
    ];
}

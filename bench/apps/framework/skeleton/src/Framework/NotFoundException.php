<?php

declare(strict_types=1);

namespace Framework;

class NotFoundException extends \RuntimeException
{
}

<?php

declare(strict_types=1);

namespace Framework;

final class ContainerException extends \RuntimeException
{
}

<?php

declare(strict_types=1);

namespace Framework;

final class Translator
{
    /** @var array<string, string> */
    private array $messages;

    public function __construct(Config $config)
    {
        $this->messages = require $config->get('paths.translations');
    }

    /** @param array<string, string|int> $params */
    public function trans(string $key, array $params = []): string
    {
        $text = $this->messages[$key] ?? $key;
        foreach ($params as $name => $value) {
            $text = str_replace('{' . $name . '}', (string) $value, $text);
        }

        return $text;
    }
}

<?php

declare(strict_types=1);

namespace Framework;

/**
 * Plain-PHP templates: a page template rendered inside templates/layout.php.
 */
final class View
{
    private readonly string $dir;

    public function __construct(Config $config, private readonly Translator $translator)
    {
        $this->dir = $config->get('paths.templates');
    }

    /** @param array<string, mixed> $vars */
    public function render(string $template, array $vars): string
    {
        $content = $this->include($template, $vars);

        return $this->include('layout', ['content' => $content] + $vars);
    }

    /** @param array<string, mixed> $vars */
    private function include(string $template, array $vars): string
    {
        $e = static fn (mixed $v): string => htmlspecialchars((string) $v, ENT_QUOTES | ENT_SUBSTITUTE, 'UTF-8');
        $t = $this->translator->trans(...);
        ob_start();
        try {
            (static function (string $__file, array $__vars, \Closure $e, \Closure $t): void {
                extract($__vars, EXTR_SKIP);
                require $__file;
            })("{$this->dir}/$template.php", $vars, $e, $t);

            return (string) ob_get_contents();
        } finally {
            ob_end_clean();
        }
    }
}

<?php

declare(strict_types=1);

namespace Voting;

/** HTML of the two pages and of the message pages; every dynamic value is escaped. */
final class View
{
    private const PAGES = [
        'good' => ['/', 'Top of the best stickers'],
        'bad' => ['/bad', 'The worst stickers'],
    ];

    /**
     * @param list<Sticker> $stickers in display order
     * @param int|null $servedBy in replica-set mode, box.info.id of the instance that read them
     */
    public function page(string $kind, array $stickers, ?int $servedBy = null): string
    {
        [$self, $title] = self::PAGES[$kind];
        $items = '';
        foreach ($stickers as $rank => $s) {
            $items .= \sprintf(
                "<li data-id=\"%d\" data-rating=\"%d\"><img src=\"%s\" alt=\"%s\" width=\"128\" height=\"128\">"
                . "<b>%d. %s</b><small>pack %d &middot; rating %d</small></li>\n",
                $s->id,
                $s->rating,
                self::e($s->image),
                self::e($s->name),
                $rank + 1,
                self::e($s->name),
                $s->pack,
                $s->rating,
            );
        }
        $pairs = '';
        for ($i = 1, $n = \count($stickers); $i < $n; $i++) {
            $a = $stickers[$i - 1];
            $b = $stickers[$i];
            $pairs .= '<li>' . self::voteForm($a, $b, $self) . ' or ' . self::voteForm($b, $a, $self) . "</li>\n";
        }
        $footer = $servedBy === null ? '' : \sprintf(
            "<p class=\"served\">Stickers read from Tarantool instance #%d of the replica set; votes go to its master.</p>\n",
            $servedBy,
        );
        return $this->layout($title, $kind, "<ol class=\"stickers\">\n$items</ol>\n<h2>Which one is better?</h2>\n<ul class=\"pairs\">\n$pairs</ul>\n$footer");
    }

    public function message(string $title, string $text): string
    {
        return $this->layout($title, '', '<p class="message">' . self::e($text) . '</p><p><a href="/">Back to the top</a></p>');
    }

    private static function voteForm(Sticker $winner, Sticker $loser, string $from): string
    {
        return \sprintf(
            '<form method="post" action="/vote"><input type="hidden" name="winner" value="%d">'
            . '<input type="hidden" name="loser" value="%d"><input type="hidden" name="from" value="%s">'
            . '<button title="%s beats %s">%s</button></form>',
            $winner->id,
            $loser->id,
            $from,
            self::e($winner->name),
            self::e($loser->name),
            self::e($winner->name) . ' #' . $winner->id,
        );
    }

    private function layout(string $title, string $active, string $content): string
    {
        $nav = '';
        foreach (self::PAGES as $kind => [$href, $label]) {
            $nav .= \sprintf('<a href="%s"%s>%s</a> ', $href, $kind === $active ? ' class="active"' : '', $kind === 'good' ? 'Good' : 'Bad');
        }
        $title = self::e($title);
        return <<<HTML
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>$title</title>
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <style>
            body{font:16px/1.4 system-ui,sans-serif;margin:0 auto;max-width:60em;padding:1em}
            nav a{margin-right:1em}nav a.active{font-weight:bold}
            .stickers{display:grid;grid-template-columns:repeat(auto-fill,minmax(10em,1fr));gap:1em;list-style:none;padding:0}
            .stickers li{text-align:center}.stickers b,.stickers small{display:block}
            .pairs form{display:inline}.pairs li{margin:.3em 0}
            </style></head>
            <body><nav>$nav</nav>
            <h1>$title</h1>
            $content
            </body></html>

            HTML;
    }

    private static function e(string $s): string
    {
        return htmlspecialchars($s, ENT_QUOTES | ENT_SUBSTITUTE | ENT_HTML5, 'UTF-8');
    }
}

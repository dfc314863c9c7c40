<?php

declare(strict_types=1);

// Writes the 40 sticker images to public/stickers/NN.svg (committed; rerun after changing
// this script). Sticker records use /stickers/(id % 40).svg. Deterministic: same files every run.
$dir = __DIR__ . '/../public/stickers';
if (!is_dir($dir) && !mkdir($dir, 0o755, true)) {
    fwrite(STDERR, "cannot create $dir\n");
    exit(1);
}

$furs = ['#8d6e63', '#ff8a65', '#ffd54f', '#90a4ae', '#a1887f', '#aed581', '#f48fb1', '#ce93d8'];
$backs = ['#e3f2fd', '#fff3e0', '#e8f5e9', '#fce4ec', '#ede7f6'];

for ($i = 0; $i < 40; $i++) {
    $fur = $furs[$i % count($furs)];
    $back = $backs[intdiv($i, 8) % count($backs)];
    $pointy = $i % 3 === 0;
    $mask = $i % 4 === 1;     // the raccoons of the article's demo
    $smile = $i % 5 !== 2;
    $ears = $pointy
        ? "<path d=\"M22 40 L30 8 L48 30Z M106 40 L98 8 L80 30Z\" fill=\"$fur\"/>"
        : "<circle cx=\"32\" cy=\"30\" r=\"16\" fill=\"$fur\"/><circle cx=\"96\" cy=\"30\" r=\"16\" fill=\"$fur\"/>";
    $maskSvg = $mask ? '<path d="M28 58 Q64 40 100 58 Q100 76 84 74 Q64 64 44 74 Q28 76 28 58Z" fill="#37474f"/>' : '';
    $eyeFill = $mask ? '#fff' : '#263238';
    $mouth = $smile ? '<path d="M50 88 Q64 100 78 88" stroke="#263238" stroke-width="4" fill="none" stroke-linecap="round"/>'
        : '<path d="M52 94 Q64 84 76 94" stroke="#263238" stroke-width="4" fill="none" stroke-linecap="round"/>';
    $svg = <<<SVG
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 128 128" width="128" height="128">
        <rect width="128" height="128" rx="24" fill="$back"/>
        $ears
        <circle cx="64" cy="70" r="44" fill="$fur"/>
        <ellipse cx="64" cy="86" rx="22" ry="16" fill="#fff" opacity=".6"/>
        $maskSvg
        <circle cx="46" cy="62" r="6" fill="$eyeFill"/><circle cx="82" cy="62" r="6" fill="$eyeFill"/>
        <ellipse cx="64" cy="78" rx="7" ry="5" fill="#263238"/>
        $mouth
        <text x="64" y="122" font-family="sans-serif" font-size="10" text-anchor="middle" fill="#546e7a">#$i</text>
        </svg>

        SVG;
    file_put_contents(sprintf('%s/%02d.svg', $dir, $i), $svg);
}
echo "40 stickers written to " . realpath($dir) . "\n";

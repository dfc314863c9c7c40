<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title><?= $e($title) ?> — <?= $e($t('app.name')) ?></title>
<link rel="stylesheet" href="/assets/app.css">
</head>
<body class="theme-<?= $e($theme) ?>">
<header><nav><a href="/"><?= $e($t('nav.home')) ?></a></nav></header>
<main>
<?= $content ?>
</main>
<footer><?= $e($t('footer.text', ['year' => 2026])) ?></footer>
</body>
</html>

<h1><?= $e($title) ?></h1>
<p><?= $e($guest ? $t('home.guest') : $t('home.member')) ?></p>
<ul class="modules">
<?php foreach ($modules as $slug => $name): ?>
  <li><a href="/<?= $e($slug) ?>"><?= $e($name) ?></a></li>
<?php endforeach ?>
</ul>

<h1><?= $e($item['name']) ?></h1>
<dl>
  <dt><?= $e($t('col.price')) ?></dt><dd><?= $e($item['price']) ?></dd>
  <dt><?= $e($t('col.stock')) ?></dt><dd><?= $e($item['stock']) ?></dd>
  <dt><?= $e($t('col.tags')) ?></dt><dd><?= $e(implode(', ', $item['tags'])) ?></dd>
</dl>
<p><a href="<?= $e($back) ?>"><?= $e($t('nav.back')) ?></a></p>

<h1><?= $e($title) ?></h1>
<p><?= $e($t('list.summary', ['count' => count($items), 'page' => $page])) ?></p>
<table class="items">
<thead><tr><th>#</th><th><?= $e($t('col.name')) ?></th><th><?= $e($t('col.price')) ?></th><th><?= $e($t('col.stock')) ?></th><th><?= $e($t('col.tags')) ?></th></tr></thead>
<tbody>
<?php foreach ($items as $item): ?>
<tr>
  <td><?= $e($item['id']) ?></td>
  <td><a href="<?= $e($item['url']) ?>"><?= $e($item['name']) ?></a></td>
  <td><?= $e($item['price']) ?></td>
  <td><?= $e($item['stock']) ?></td>
  <td><?= $e(implode(', ', $item['tags'])) ?></td>
</tr>
<?php endforeach ?>
</tbody>
</table>

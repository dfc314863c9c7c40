<p>owner: {{ $owner }}</p>

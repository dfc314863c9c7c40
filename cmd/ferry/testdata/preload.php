<?php
// Preloaded by the opcache test: defined in every worker before app.php runs.
function ferry_test_preloaded(): string
{
    return 'preloaded';
}

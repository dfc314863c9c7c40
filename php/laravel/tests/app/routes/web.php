<?php

declare(strict_types=1);

use App\Http\Controllers\PageController;
use App\Http\Controllers\StateController;
use Illuminate\Support\Facades\Route;

// Controllers rather than closures, so that `php artisan route:cache` works (benchmark).
Route::get('/', [PageController::class, 'home']);
Route::get('/hello/{name}', [PageController::class, 'hello']);
Route::post('/form', [PageController::class, 'form']);
Route::post('/upload', [PageController::class, 'upload']);
Route::get('/cookie/set', [PageController::class, 'setCookie']);
Route::get('/cookie/get', [PageController::class, 'getCookie']);
Route::get('/cookie/queue', [PageController::class, 'queueCookie']);
Route::get('/session/counter', [PageController::class, 'counter']);
Route::get('/boom', [PageController::class, 'boom']);
Route::get('/login/{id}', [PageController::class, 'login']);
Route::get('/logout', [PageController::class, 'logout']);
Route::get('/whoami', [PageController::class, 'whoami']);
Route::get('/config', [PageController::class, 'config']);
Route::get('/terminate/slow', [PageController::class, 'slowTerminate']);
Route::get('/terminate/middleware', [PageController::class, 'home'])->middleware('record-terminate');
Route::get('/runtime', [PageController::class, 'runtime']);
Route::get('/via', [PageController::class, 'via']);
Route::get('/view', [PageController::class, 'view']);

Route::get('/state', [StateController::class, 'state']);
Route::get('/mutate/{name}', [StateController::class, 'mutate']);
Route::get('/controller/{tag}', [StateController::class, 'constructedFor']);

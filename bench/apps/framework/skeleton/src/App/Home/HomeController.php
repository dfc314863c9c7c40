<?php

declare(strict_types=1);

namespace App\Home;

use Framework\Config;
use Framework\Http\Request;
use Framework\Http\Response;
use Framework\View;

final class HomeController
{
    public function __construct(private readonly Config $config, private readonly View $view)
    {
    }

    public function index(Request $request): Response
    {
        return new Response($this->view->render('home', [
            'title' => $this->config->get('app.name'),
            'modules' => $this->config->get('modules'),
            'theme' => $request->attributes['theme'],
            'guest' => $request->attributes['session']['guest'],
        ]));
    }
}

"""PHP source of the 15 classes every generated module has (see gen.py). @M@ is the
module name (PascalCase), @m@ its URL slug, @MAX@ the largest id, @PER@ the page size."""

HEAD = "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\@M@;\n\n"

CLASSES = {
    "RepositoryInterface": """interface @M@RepositoryInterface
{
    /** @return list<@M@Entity> */
    public function findPage(int $page, int $perPage): array;

    public function find(int $id): ?@M@Entity;
}
""",
    "Entity": """final class @M@Entity
{
    /** @param list<string> $tags */
    public function __construct(
        public readonly int $id,
        public readonly string $name,
        public readonly int $price,
        public readonly int $stock,
        public readonly array $tags,
    ) {
    }
}
""",
    "Hydrator": """final class @M@Hydrator
{
    /** @param array{id: int, name: string, price: int, stock: int, tags: list<string>} $row */
    public function hydrate(array $row): @M@Entity
    {
        return new @M@Entity($row['id'], $row['name'], $row['price'], $row['stock'], $row['tags']);
    }
}
""",
    "Repository": """use Framework\\Database;

final class @M@Repository implements @M@RepositoryInterface
{
    public function __construct(private readonly Database $db, private readonly @M@Hydrator $hydrator)
    {
    }

    public function findPage(int $page, int $perPage): array
    {
        return array_map($this->hydrator->hydrate(...), $this->db->select('@m@', ($page - 1) * $perPage, $perPage));
    }

    public function find(int $id): ?@M@Entity
    {
        $rows = $this->db->select('@m@', $id - 1, 1);

        return $rows === [] ? null : $this->hydrator->hydrate($rows[0]);
    }
}
""",
    "Exception": """final class @M@Exception extends \\Framework\\NotFoundException
{
}
""",
    "Validator": """final class @M@Validator
{
    public function id(int $id): int
    {
        if ($id < 1 || $id > @MAX@) {
            throw new @M@Exception("@m@ #$id does not exist");
        }

        return $id;
    }

    public function page(int $page): int
    {
        return max(1, min($page, intdiv(@MAX@, @PER@)));
    }
}
""",
    "Formatter": """use Framework\\Cache;
use Framework\\Translator;

final class @M@Formatter
{
    public function __construct(private readonly Translator $translator, private readonly Cache $cache)
    {
    }

    public function price(int $cents): string
    {
        $currency = $this->cache->remember('currency', fn (): string => $this->translator->trans('currency'));

        return number_format($cents / 100, 2, '.', ' ') . ' ' . $currency;
    }

    public function stock(int $stock): string
    {
        return $stock === 0 ? $this->translator->trans('stock.out') : $this->translator->trans('stock.in', ['n' => $stock]);
    }
}
""",
    "Presenter": """final class @M@Presenter
{
    public function __construct(private readonly @M@Formatter $formatter)
    {
    }

    /** @return array<string, mixed> */
    public function present(@M@Entity $entity): array
    {
        return [
            'id' => $entity->id,
            'name' => $entity->name,
            'url' => '/@m@/' . $entity->id,
            'price' => $this->formatter->price($entity->price),
            'stock' => $this->formatter->stock($entity->stock),
            'tags' => $entity->tags,
        ];
    }
}
""",
    "Query": """use Framework\\Http\\Request;

final class @M@Query
{
    public function __construct(public readonly int $page, public readonly int $perPage)
    {
    }

    public static function fromRequest(Request $request): self
    {
        $page = $request->query['page'] ?? '1';

        return new self(\\is_string($page) && ctype_digit($page) ? (int) $page : 1, @PER@);
    }
}
""",
    "Policy": """use Framework\\Http\\Request;

final class @M@Policy
{
    public function canView(Request $request): bool
    {
        return $request->cookie('role') !== 'banned';
    }
}
""",
    "ViewedEvent": """final class @M@ViewedEvent
{
    public function __construct(public readonly int $id)
    {
    }
}
""",
    "ViewedListener": """use Framework\\Logger;
use Framework\\Metrics;

final class @M@ViewedListener
{
    public function __construct(private readonly Metrics $metrics, private readonly Logger $logger)
    {
    }

    public function handle(@M@ViewedEvent $event): void
    {
        $this->metrics->increment('@m@.viewed');
        $this->logger->info("@m@ #{$event->id} viewed");
    }
}
""",
    "Service": """use Framework\\EventDispatcher;

final class @M@Service
{
    public function __construct(
        private readonly @M@RepositoryInterface $repository,
        private readonly @M@Validator $validator,
        private readonly EventDispatcher $events,
    ) {
    }

    /** @return list<@M@Entity> */
    public function page(@M@Query $query): array
    {
        return $this->repository->findPage($this->validator->page($query->page), $query->perPage);
    }

    public function get(int $id): @M@Entity
    {
        $entity = $this->repository->find($this->validator->id($id)) ?? throw new @M@Exception("@m@ #$id is gone");
        $this->events->dispatch(new @M@ViewedEvent($id));

        return $entity;
    }
}
""",
    "Controller": """use Framework\\Http\\Request;
use Framework\\Http\\Response;
use Framework\\Translator;
use Framework\\View;

final class @M@Controller
{
    public function __construct(
        private readonly @M@Service $service,
        private readonly @M@Presenter $presenter,
        private readonly @M@Policy $policy,
        private readonly View $view,
        private readonly Translator $translator,
    ) {
    }

    public function index(Request $request): Response
    {
        if (!$this->policy->canView($request)) {
            return new Response('Forbidden', 403);
        }
        $query = @M@Query::fromRequest($request);
        $items = array_map($this->presenter->present(...), $this->service->page($query));

        return new Response($this->view->render('list', [
            'title' => $this->translator->trans('@m@.title'),
            'items' => $items,
            'page' => $query->page,
            'theme' => $request->attributes['theme'],
        ]));
    }

    public function show(Request $request, string $id): Response
    {
        $item = $this->presenter->present($this->service->get((int) $id));

        return new Response($this->view->render('show', [
            'title' => $item['name'],
            'item' => $item,
            'back' => '/@m@',
            'theme' => $request->attributes['theme'],
        ]));
    }
}
""",
    "ServiceProvider": """use Framework\\Container;
use Framework\\EventDispatcher;
use Framework\\Router;
use Framework\\ServiceProvider;

final class @M@ServiceProvider extends ServiceProvider
{
    public function register(Container $container): void
    {
        foreach ([@M@Hydrator::class, @M@Repository::class, @M@Validator::class, @M@Formatter::class,
                  @M@Presenter::class, @M@Policy::class, @M@Service::class, @M@Controller::class,
                  @M@ViewedListener::class] as $class) {
            $container->bind($class);
        }
        $container->bind(@M@RepositoryInterface::class, static fn (Container $c): object => $c->get(@M@Repository::class));
    }

    public function boot(Router $router, EventDispatcher $events): void
    {
        $router->get('/@m@', [@M@Controller::class, 'index']);
        $router->get('/@m@/{id}', [@M@Controller::class, 'show']);
        $events->listen(@M@ViewedEvent::class, @M@ViewedListener::class);
    }
}
""",
}

<?php

declare(strict_types=1);

namespace App\Auth;

use Illuminate\Auth\GenericUser;
use Illuminate\Contracts\Auth\Authenticatable;
use Illuminate\Contracts\Auth\UserProvider;

/** Users from config/auth.php, so the test app needs no database. Password: "secret". */
final class MemoryUserProvider implements UserProvider
{
    /** @param array<int, array{id: int, name: string}> $users */
    public function __construct(private readonly array $users)
    {
    }

    public function retrieveById($identifier): ?Authenticatable
    {
        $user = $this->users[(int) $identifier] ?? null;

        return $user === null ? null : new GenericUser($user + ['password' => 'secret', 'remember_token' => null]);
    }

    public function retrieveByToken($identifier, $token): ?Authenticatable
    {
        return null;
    }

    public function updateRememberToken(Authenticatable $user, $token): void
    {
    }

    public function retrieveByCredentials(array $credentials): ?Authenticatable
    {
        foreach ($this->users as $id => $user) {
            if ($user['name'] === ($credentials['name'] ?? null)) {
                return $this->retrieveById($id);
            }
        }

        return null;
    }

    public function validateCredentials(Authenticatable $user, array $credentials): bool
    {
        return ($credentials['password'] ?? null) === 'secret';
    }
}

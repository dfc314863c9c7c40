<?php

declare(strict_types=1);

namespace Voting;

/** The words voting_vote() in tarantool/init.lua answers with, and what HTTP makes of them. */
enum VoteOutcome: string
{
    case Ok = 'ok';
    case BadRequest = 'bad_request';
    case SameSticker = 'same_sticker';
    case NoSession = 'no_session';
    case UnknownSticker = 'unknown_sticker';
    case AlreadyVoted = 'already_voted';

    public function status(): int
    {
        return match ($this) {
            self::Ok => 200,
            self::BadRequest, self::SameSticker, self::UnknownSticker => 400,
            self::NoSession => 403,
            self::AlreadyVoted => 409,
        };
    }

    public function message(): string
    {
        return match ($this) {
            self::Ok => 'Thanks, your vote was counted.',
            self::BadRequest => 'winner and loser must be sticker ids.',
            self::SameSticker => 'A sticker cannot win against itself.',
            self::NoSession => 'No valid session: open a page first (cookies must be enabled).',
            self::UnknownSticker => 'There is no sticker with that id.',
            self::AlreadyVoted => 'You have already voted on this pair.',
        };
    }
}

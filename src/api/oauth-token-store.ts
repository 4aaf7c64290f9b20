import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/** The OAuth tokens every process of one credential shares. */
export interface SharedTokens {
  accessToken: string;
  /** Epoch ms. */
  expiresAt: number;
  /** The latest refresh token: a platform that rotates them revokes the previous one. */
  refreshToken: string;
}

/**
 * Where the processes that share an OAuth credential keep its tokens, so that one
 * refresh serves all of them and a rotated refresh token is not lost to the others.
 */
export interface OAuthTokenStore {
  load(): Promise<SharedTokens | undefined>;
  save(tokens: SharedTokens): Promise<void>;
  /** Runs `fn` while no other process of this credential is refreshing. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
}

/** Options of {@link createRedisTokenStore}. */
export interface RedisTokenStoreOptions {
  redis: Redis | Cluster;
  /**
   * The OAuth client secret: the tokens are stored encrypted (AES-256-GCM) under a key
   * derived from it, so Redis only ever holds ciphertext that processes without the
   * credential cannot read.
   */
  clientSecret: string;
  /** Longest a refresh may hold the lock. @defaultValue 15_000 */
  lockMs?: number;
  /** The credential's token endpoint and client id: together they name its refresh-token chain. */
  tokenUrl: string;
  clientId: string;
}

/**
 * The Redis key of a credential's tokens: a hash of its token URL and client id, and of
 * nothing else. A platform that rotates refresh tokens keeps one chain per client: every
 * deployment using the client (whatever its queue prefix or app id) must share it.
 */
export function oauthTokenKey(tokenUrl: string, clientId: string): string {
  const id = createHash('sha256').update(`${tokenUrl}\n${clientId}`, 'utf8').digest('hex').slice(0, 32);
  return `rowbridge:oauth:${id}`;
}

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
/** Kept past any access token lifetime; the refresh token inside may live longer than the key. */
const TTL_SECONDS = 30 * 24 * 3600;

export function createRedisTokenStore(options: RedisTokenStoreOptions): OAuthTokenStore {
  const { redis } = options;
  const key = oauthTokenKey(options.tokenUrl, options.clientId);
  const lockKey = `${key}:lock`;
  const lockMs = options.lockMs ?? 15_000;
  const secretKey = Buffer.from(hkdfSync('sha256', options.clientSecret, key, 'rowbridge oauth tokens', 32));

  function seal(tokens: SharedTokens): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', secretKey, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(tokens), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  function open(sealed: string): SharedTokens | undefined {
    try {
      const raw = Buffer.from(sealed, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', secretKey, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      return JSON.parse(text) as SharedTokens;
    } catch {
      // Written under another client secret (the credential changed): start afresh.
      return undefined;
    }
  }

  return {
    async load() {
      const sealed = await redis.get(key);
      return sealed === null ? undefined : open(sealed);
    },
    async save(tokens) {
      await redis.set(key, seal(tokens), 'EX', TTL_SECONDS);
    },
    async exclusive(fn) {
      const owner = randomBytes(8).toString('hex');
      const deadline = Date.now() + lockMs;
      // A holder that died keeps the lock at most lockMs; after that the waiters go on.
      while ((await redis.set(lockKey, owner, 'PX', lockMs, 'NX')) !== 'OK' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      try {
        return await fn();
      } finally {
        await redis.eval(RELEASE, 1, lockKey, owner);
      }
    },
  };
}

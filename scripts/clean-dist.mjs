// Removes ./dist of the package it runs in, so a build never ships stale files.
import { rmSync } from 'node:fs';

rmSync('dist', { recursive: true, force: true });

mod files;
mod index;
mod reconstruct;

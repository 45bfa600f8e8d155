//! restart

//! The transaction a write runs in ([`super::database::begin_write`]).
//!
//! On SQLite it is the ORM's transaction. On PostgreSQL it is the driver's own transaction on
//! the writer's connection, wrapped so that the ORM's statements run in it as they would in
//! the ORM's: the ORM keeps its transaction's connection to itself, and a bulk insert by
//! `COPY` ([`super::pg_copy`]) must run on the connection that holds the transaction, so that
//! the copied rows commit or roll back with the checkpoint.

use sea_orm::{
    ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr, ExecResult,
    QueryResult, RuntimeErr, SqliteTransactionMode, Statement, TransactionOptions,
    TransactionTrait,
    sqlx::{self, Postgres},
};
use sea_query_sqlx::SqlxValues;
use tokio::sync::Mutex;

/// A write's transaction: commits with [`WriteTxn::commit`], rolls back when dropped.
#[derive(Debug)]
pub enum WriteTxn {
    /// SQLite's: the ORM's transaction.
    Orm(DatabaseTransaction),
    /// PostgreSQL's: the driver's transaction on the writer's connection.
    Postgres(Mutex<sqlx::Transaction<'static, Postgres>>),
}

impl WriteTxn {
    /// Begins a write on `db`. On SQLite the write lock is taken at `BEGIN` (`BEGIN
    /// IMMEDIATE`, see [`super::database::begin_write`]).
    pub(super) async fn begin(db: &DatabaseConnection) -> Result<Self, DbErr> {
        if db.get_database_backend() == DbBackend::Postgres {
            let txn = db.get_postgres_connection_pool().begin().await.map_err(conn_err)?;
            return Ok(WriteTxn::Postgres(Mutex::new(txn)));
        }
        let options = TransactionOptions {
            sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
            ..TransactionOptions::default()
        };
        Ok(WriteTxn::Orm(db.begin_with_options(options).await?))
    }

    /// Commits the write.
    pub async fn commit(self) -> Result<(), DbErr> {
        match self {
            WriteTxn::Orm(txn) => txn.commit().await,
            WriteTxn::Postgres(txn) => txn.into_inner().commit().await.map_err(query_err),
        }
    }

    /// Rolls the write back.
    pub async fn rollback(self) -> Result<(), DbErr> {
        match self {
            WriteTxn::Orm(txn) => txn.rollback().await,
            WriteTxn::Postgres(txn) => txn.into_inner().rollback().await.map_err(query_err),
        }
    }

    /// Runs `copy` (a `COPY … FROM STDIN` statement) in the transaction, sending it
    /// `pieces` of its input one after the other, and returns the rows copied. An error on
    /// SQLite, which has no `COPY`.
    pub(super) async fn copy_in(
        &self,
        copy: &str,
        pieces: impl Iterator<Item = Vec<u8>> + Send,
    ) -> Result<u64, DbErr> {
        let WriteTxn::Postgres(txn) = self else {
            return Err(DbErr::Exec(RuntimeErr::Internal("COPY is PostgreSQL's".into())));
        };
        let mut txn = txn.lock().await;
        let mut sink = txn.copy_in_raw(copy).await.map_err(exec_err)?;
        for piece in pieces {
            sink.send(piece).await.map_err(exec_err)?;
        }
        sink.finish().await.map_err(exec_err)
    }
}

fn conn_err(err: sqlx::Error) -> DbErr {
    DbErr::Conn(RuntimeErr::SqlxError(err.into()))
}

fn exec_err(err: sqlx::Error) -> DbErr {
    DbErr::Exec(RuntimeErr::SqlxError(err.into()))
}

fn query_err(err: sqlx::Error) -> DbErr {
    DbErr::Query(RuntimeErr::SqlxError(err.into()))
}

/// The driver's query for an ORM statement, its values bound as the ORM binds them.
fn query(stmt: &Statement) -> sqlx::query::Query<'_, Postgres, SqlxValues> {
    let values = stmt.values.clone().unwrap_or(sea_orm::sea_query::Values(Vec::new()));
    sqlx::query_with(sqlx::AssertSqlSafe(stmt.sql.as_str()), SqlxValues(values))
}

#[async_trait::async_trait]
impl ConnectionTrait for WriteTxn {
    fn get_database_backend(&self) -> DbBackend {
        match self {
            WriteTxn::Orm(txn) => txn.get_database_backend(),
            WriteTxn::Postgres(_) => DbBackend::Postgres,
        }
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        match self {
            WriteTxn::Orm(txn) => txn.execute_raw(stmt).await,
            WriteTxn::Postgres(txn) => {
                let mut txn = txn.lock().await;
                query(&stmt).execute(&mut **txn).await.map(Into::into).map_err(exec_err)
            }
        }
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        match self {
            WriteTxn::Orm(txn) => txn.execute_unprepared(sql).await,
            WriteTxn::Postgres(txn) => {
                let mut txn = txn.lock().await;
                sqlx::Executor::execute(&mut **txn, sqlx::AssertSqlSafe(sql.to_owned()))
                    .await
                    .map(Into::into)
                    .map_err(exec_err)
            }
        }
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        match self {
            WriteTxn::Orm(txn) => txn.query_one_raw(stmt).await,
            WriteTxn::Postgres(txn) => {
                let mut txn = txn.lock().await;
                query(&stmt)
                    .fetch_optional(&mut **txn)
                    .await
                    .map(|row| row.map(Into::into))
                    .map_err(query_err)
            }
        }
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        match self {
            WriteTxn::Orm(txn) => txn.query_all_raw(stmt).await,
            WriteTxn::Postgres(txn) => {
                let mut txn = txn.lock().await;
                query(&stmt)
                    .fetch_all(&mut **txn)
                    .await
                    .map(|rows| rows.into_iter().map(Into::into).collect())
                    .map_err(query_err)
            }
        }
    }
}

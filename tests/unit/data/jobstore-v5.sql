-- SPDX-License-Identifier: MIT
-- A job store as qpoold wrote it at schema version 5 (before job_alloc and
-- the jobs' chunks and place): test_jobstore migrates it in place. sqlite3 .dump
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES(1);
INSERT INTO schema_version VALUES(2);
INSERT INTO schema_version VALUES(3);
INSERT INTO schema_version VALUES(4);
INSERT INTO schema_version VALUES(5);
CREATE TABLE jobs ( id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, queue TEXT NOT NULL, owner TEXT NOT NULL, uid INTEGER NOT NULL, gid INTEGER NOT NULL, state TEXT NOT NULL, ncpus INTEGER NOT NULL, mem INTEGER NOT NULL, walltime INTEGER NOT NULL, workdir TEXT NOT NULL, stdout TEXT NOT NULL, stderr TEXT NOT NULL, join_oe INTEGER NOT NULL, rerunnable INTEGER NOT NULL, node TEXT, cpus TEXT, exit_status INTEGER, exit_signal INTEGER, reason TEXT, cpu_ns INTEGER, mem_peak INTEGER, oom INTEGER, t_submit INTEGER, t_dispatch INTEGER, t_launch INTEGER, t_wrap INTEGER, t_fenced INTEGER, t_exec INTEGER, t_exit INTEGER, t_released INTEGER, t_done INTEGER, m_wrap INTEGER, m_fenced INTEGER, m_exec INTEGER, m_exit INTEGER, m_released INTEGER, umask INTEGER, attrs TEXT);
INSERT INTO jobs VALUES(1,'waiting','batch','alice',1001,1001,'queued',2,1048576,60,'/home/alice','','',0,1,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,1000,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO jobs VALUES(2,'busy','multi8','bob',1002,1002,'running',8,0,3600,'/home/bob','/home/bob/o','/home/bob/e',1,0,'n1','0-7',NULL,NULL,NULL,NULL,NULL,NULL,1001,1002,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,18,'{"Resource_List.place":"scatter"}');
INSERT INTO jobs VALUES(3,'old','batch','alice',1001,1001,'completed',1,0,60,'/home/alice','','',0,1,'n1','3',0,NULL,NULL,NULL,NULL,NULL,900,901,NULL,NULL,NULL,NULL,NULL,NULL,950,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
CREATE TABLE job_payload ( job_id INTEGER PRIMARY KEY REFERENCES jobs(id), env TEXT NOT NULL, script TEXT NOT NULL);
INSERT INTO job_payload VALUES(1,'{"A":"1"}',replace('#!/bin/sh\necho waiting\n','\n',char(10)));
INSERT INTO job_payload VALUES(2,'{}',replace('#!/bin/sh\nsleep 100\n','\n',char(10)));
INSERT INTO job_payload VALUES(3,'{}',replace('true\n','\n',char(10)));
CREATE TABLE iqs_rotation (queue TEXT NOT NULL, uid INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (queue, uid));
INSERT INTO iqs_rotation VALUES('multi8',1002,5);
CREATE TABLE queue_admin (queue TEXT PRIMARY KEY, enabled INTEGER, started INTEGER, reason TEXT);
CREATE TABLE node_admin (node TEXT PRIMARY KEY, drain INTEGER NOT NULL, reason TEXT);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('jobs',3);
CREATE INDEX jobs_state ON jobs(state);
CREATE INDEX jobs_done ON jobs(t_done);
COMMIT;

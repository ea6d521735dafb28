#define FUSE_USE_VERSION 35
#include <fuse3/fuse.h>
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <fcntl.h>
static char *mem; static size_t SZ = 256UL<<20;
static atomic_int inflight, maxin;
static int g_getattr(const char *p, struct stat *st, struct fuse_file_info *fi){
  memset(st,0,sizeof *st);
  if(!strcmp(p,"/")){st->st_mode=S_IFDIR|0755;st->st_nlink=2;return 0;}
  if(!strcmp(p,"/disk")){st->st_mode=S_IFREG|0644;st->st_nlink=1;st->st_size=SZ;return 0;}
  return -ENOENT;}
static int g_readdir(const char *p, void *b, fuse_fill_dir_t f, off_t o, struct fuse_file_info *fi, enum fuse_readdir_flags fl){
  f(b,".",NULL,0,0);f(b,"..",NULL,0,0);f(b,"disk",NULL,0,0);return 0;}
static int g_open(const char *p, struct fuse_file_info *fi){ fi->direct_io=1; return 0;}
static int g_read(const char *p, char *buf, size_t n, off_t o, struct fuse_file_info *fi){
  int c=++inflight; if(c>maxin)maxin=c; memcpy(buf,mem+o,n); --inflight; return n;}
static int g_write(const char *p, const char *buf, size_t n, off_t o, struct fuse_file_info *fi){
  int c=++inflight; if(c>maxin)maxin=c; memcpy(mem+o,buf,n); --inflight; return n;}
static int g_falloc(const char *p, int mode, off_t o, off_t n, struct fuse_file_info *fi){
  fprintf(stderr,"fallocate mode=%d off=%ld len=%ld\n",mode,(long)o,(long)n); memset(mem+o,0,n); return 0;}
static int g_fsync(const char *p, int d, struct fuse_file_info *fi){return 0;}
static void g_destroy(void*x){fprintf(stderr,"max inflight %d\n",maxin);}
static void *g_init(struct fuse_conn_info *c, struct fuse_config *cfg){ c->max_background=128; c->congestion_threshold=96; return NULL;}
static const struct fuse_operations ops={.getattr=g_getattr,.readdir=g_readdir,.open=g_open,.read=g_read,.write=g_write,.fallocate=g_falloc,.fsync=g_fsync,.destroy=g_destroy,.init=g_init};
int main(int argc,char**argv){ mem=calloc(1,SZ); return fuse_main(argc,argv,&ops,NULL);}
